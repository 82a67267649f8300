/**
 * The app the browser tests drive: a GET with a path parameter and query fields, a JSON POST with
 * validated fields (enum, default, e-mail, bounds), a multipart upload of an image, a route behind
 * `guard auth` (plus `role` with arguments), one behind `guard csrf`, app-defined guards (one calling
 * auth_user()), and doc
 * comments everywhere the reference shows them.
 */

/** The key the auth guard verifies tokens with (given to the app as the JWT_SECRET env setting). */
export const JWT_SECRET = 'browser-test-key-0123456789abcdef';

/** The route files, by path in the app folder. */
export const FIXTURE_FILES: Readonly<Record<string, string>> = {
  'api/items.rvm': `/// Reads one item by its id.
///
/// The \`fields\` query narrows what comes back.
route GET /items/:id {
  guard rate_limit(1000, 60)
  query {
    /// Which fields to include.
    fields?: text @maxLength(40)
    /// Result page, from 1.
    page?: int @min(1) @default(1)
  }
  response.ok({ id: params.id, page: query.page, fields: query.fields })
}

/// Creates an item.
route POST /items {
  validate {
    /// The item's name.
    name: text @minLength(3) @maxLength(40)
    /// Who hears about it.
    email: text @email
    /// How the item is filed.
    kind: text @one_of('book', 'film') @default('book')
    /// How many copies.
    count: int @min(1) @max(100)
  }
  response.created({ name: body.name, email: body.email, kind: body.kind, count: body.count })
}

/// Deletes an item: administrators only.
route DELETE /items/:id {
  guard auth
  guard role('admin')
  response.no_content()
}
`,
  'api/avatars.rvm': `/// Uploads an avatar picture.
route POST /avatars {
  validate {
    /// Shown under the picture.
    caption: text @minLength(1)
    /// The picture itself.
    avatar: file @image @max_size('1MB')
  }
  response.created({ caption: body.caption, type: body.avatar.type, size: body.avatar.size, name: body.avatar.name })
}
`,
  'api/account.rvm': `/// Lets through only callers who send the office header.
guard_definition from_office {
  if request.headers['x-office'] != 'yes' {
    fail 403 'Only from the office'
  }
}

/// Lets through signed-in callers: auth_user() answers 401 itself when no valid token came.
guard_definition signed_in {
  if auth_user().sub == null {
    fail 403 'A token without a subject'
  }
}

/// The caller's own page, behind the app's own guard.
route GET /mine {
  guard signed_in
  response.ok({ mine: auth_user().sub })
}

/// The signed-in caller's token claims.
route GET /me {
  guard auth
  response.ok({ sub: auth_user().sub })
}

/// Saves a note; the page fetches the CSRF token itself.
route POST /notes {
  guard csrf
  validate {
    /// The note's text.
    text: text @minLength(1) @maxLength(500)
  }
  response.created({ note: body.text })
}

/// Office hours only.
route GET /office {
  guard from_office
  response.ok({ ok: true })
}
`,
};
