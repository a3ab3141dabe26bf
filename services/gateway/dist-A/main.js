"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const common_1 = require("@vanish/common");
const config_1 = require("./config");
const compose_1 = require("./compose");
const bootLogger = (0, common_1.createLogger)('gateway');
(0, common_1.guardProcess)(bootLogger);
async function main() {
    const config = (0, config_1.loadGatewayConfig)(process.env, bootLogger);
    const logger = (0, common_1.createLogger)('gateway', config.logLevel);
    const service = await (0, compose_1.createGatewayService)(config, { logger });
    const lifecycle = new common_1.Lifecycle(logger);
    lifecycle.add('gateway', () => service.stop());
    lifecycle.onSignals(config.shutdownGraceMs);
    await service.start();
}
main().catch((err) => (0, common_1.exitFatally)(bootLogger, 'gateway failed to start', err));
//# sourceMappingURL=main.js.map