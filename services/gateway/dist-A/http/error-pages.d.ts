import { MessageTranslator, type AppError, type Language, type LanguageRequest } from '@vanish/common';
/** From src/http and dist/http alike. */
export declare const GATEWAY_LOCALES_DIR: string;
export declare function errorKind(appError: Pick<AppError, 'code' | 'statusCode'>): string;
/**
 * The small HTML page a browser gets when the gateway answers a web route itself (issue 20): in the
 * reader's language (the pages' `lang` cookie, else Accept-Language, else English), right to left for
 * Arabic, and in the reader's theme through the pages' own stylesheet (`/assets/app.css`, served by the
 * notes service: when that service is the one that cannot be reached, the page shows unstyled, still
 * readable). No inline script or style, so the strict page CSP stands.
 */
export declare class ErrorPages {
    private readonly translators;
    constructor(translators: ReadonlyMap<Language, MessageTranslator>);
    static load(dir?: string): ErrorPages;
    render(req: LanguageRequest, appError: AppError): string;
}
