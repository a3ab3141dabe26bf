export { loadNotesConfig, type NotesConfig } from './config';
export { createNotesService, type NotesService, type NotesServiceOverrides } from './compose';
export { createApiRoutes, createdBody, metadataBody, API_ROUTES, OPENAPI_DOCUMENT_FILE, type ApiRoutesDeps } from './http/api-routes';
export { validateCreateNote } from './domain/create-note-validator';
export type { CreateNoteInput, CreatedNote, NoteMetadata, NotesApi, RevealResult } from './domain/notes';
