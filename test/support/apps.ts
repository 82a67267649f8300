/** Route files several integration tests serve, written once. */

/** A `Note` record with create and find routes: the smallest app that reads and writes records. */
export const NOTE_ROUTES = `
type Note {
  title: text @minLength(1)
}

route POST /notes {
  validate { title: text }
  response.created(Note.create({ title: body.title }))
}

route GET /notes/:id {
  note = Note.find(params.id)
  if note == null { fail 404 'no such note' }
  response.ok(note)
}
`;
