/**
 * Introspection of an app that was built but is not served (`rvm openapi`): the same route
 * views the running server hands its built-in endpoints, from one `buildApp` result.
 */
import type { AppIntrospection, DiagnosticInfo, RouteInfo, TypeInfo } from '../host/introspection.js';
import type { AppSettings } from '../host/context.js';
import type { AppBuild } from './app.js';
import { routeInfo, typeInfos } from './introspection.js';

/** The introspection of a build that linked (`build.linked` is not null): generation 0, no reloads. */
export function introspectBuild(build: AppBuild): AppIntrospection {
  if (build.linked === null) throw new Error('introspectBuild needs a build without errors');
  const routes: readonly RouteInfo[] = build.linked.routes.map((r) => routeInfo(r, build.registry));
  const types: readonly TypeInfo[] = typeInfos(build.modules, build.registry);
  const settings: AppSettings = build.settings;
  return {
    settings,
    routes: () => routes,
    types: () => types,
    errors: (): readonly DiagnosticInfo[] => [],
    generation: 0,
    onReload: () => () => undefined,
  };
}
