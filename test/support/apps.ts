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

/** Lifetime of the tokens LOGOUT_ROUTES signs. */
export const LOGOUT_TTL_SECONDS = 600;

/** Sign-in (jwt_create), protected routes, auth_logout(), jwt_revoke() and jwt_verify(): the log-out tests' app (JWT_SECRET from the environment). */
export const LOGOUT_ROUTES = `
route POST /login {
  token = jwt_create({ sub: 'u-ada', name: 'Ada', role: 'admin' }, env('JWT_SECRET'), ${LOGOUT_TTL_SECONDS})
  response.ok({ token: token })
}

route GET /me {
  guard auth
  response.ok(auth_user())
}

route GET /admin {
  guard role('admin')
  response.ok({ ok: true })
}

route POST /logout {
  guard auth
  revoked = auth_logout()
  response.ok({ revoked: revoked, still_signed_in: auth_check() })
}

route POST /revoke {
  validate { token: text }
  response.ok({ revoked: jwt_revoke(body.token) })
}

route POST /verify {
  validate { token: text }
  response.ok({ claims: jwt_verify(body.token, env('JWT_SECRET')) })
}
`;
