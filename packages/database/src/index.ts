export * from './configure-knex';
export * from './database-errors';
export * from './database-settings';
export * from './database-url';
export * from './server-instance';
export * from './sqlite-worker-client';
