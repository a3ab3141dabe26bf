import { createTestDatabase } from '@vanish/testkit/mariadb';
import { notesStorageContract } from './contract/notes-storage.contract';

notesStorageContract('MariaDB', () => createTestDatabase('vanish_notes'));
