"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
//# sourceMappingURL=rate-limiter.js.map