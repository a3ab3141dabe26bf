export { assembleAllInOne, type AllInOne, type RunningParts, type ServiceModule, type SharedParts } from './assemble';
export { loadAllInOneConfig, serviceEnv, INTERNAL_HOST, PRODUCTION_REFUSAL, type AllInOneConfig, type ServiceName, type ServicePorts } from './config';
export { vanishConsumerQueues, DEFAULT_MAIL_QUEUE } from './topology';
