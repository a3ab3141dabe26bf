import type { LimitedAction } from '../domain/limit-policy';
export type UpstreamName = 'notes' | 'stats' | 'mailer';
export type RouteKind = 'api' | 'page';
/** One public route: its template (the only form of the path that reaches logs and metrics). */
export interface GatewayRoute {
    template: string;
    kind: RouteKind;
    pattern: RegExp;
    upstream: UpstreamName;
    /** Methods and the limit each one counts against (undefined: not limited). HEAD follows GET. */
    methods: Readonly<Record<string, LimitedAction | undefined>>;
    /** True when the path itself is a secret (note uuid, unsubscribe token): logs show the template. */
    secretPath: boolean;
    /** The Allow header value: the methods and OPTIONS. */
    allow: string;
    /**
     * True when a GET's answer is the same for every client: no secret in the path, and nothing in the
     * answer that depends on the client or its request headers (language, cookies, conditionals).
     * Concurrent GETs of one path then share upstream reads (shared-upstream-read.ts).
     */
    sharedRead: boolean;
}
/**
 * The gateway's whole public surface (brief "Web routes" and "API"; DECISIONS 5 for the limits).
 * Order matters: the first match wins, and `/:uuid` (any single segment) comes last.
 */
export declare const ROUTES: readonly GatewayRoute[];
export type RouteMatch = {
    found: true;
    route: GatewayRoute;
} | {
    found: false;
    kind: RouteKind;
    template: string;
};
/** Matches a path (without query string) against the table; unknown paths are named, never echoed. */
export declare function matchRoute(path: string): RouteMatch;
/** The methods a route answers, as an Allow header lists them (OPTIONS always). */
export declare function allowedMethods(matched: GatewayRoute): string[];
/**
 * The path as it may appear in a log (DECISIONS 1): the template for secret paths, otherwise
 * the path without query string, with escaped ASCII decoded first (so `%33%66...` cannot smuggle a
 * uuid past), anything uuid-shaped or token-long replaced, and bounded in length.
 */
export declare function redactPath(path: string, match: RouteMatch): string;
