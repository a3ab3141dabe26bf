import { createTestDatabase } from '@vanish/testkit/mariadb';
import { receiptsContract } from './contract/receipts.contract';

receiptsContract('MariaDB', () => createTestDatabase('vanish_receipts'));
