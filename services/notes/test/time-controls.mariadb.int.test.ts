import { createTestDatabase } from '@vanish/testkit/mariadb';
import { timeControlsContract } from './contract/time-controls.contract';

timeControlsContract('MariaDB', () => createTestDatabase('vanish_time_controls'));
