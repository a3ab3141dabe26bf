import type { Agent, Dispatcher } from 'undici';

/**
 * undici's Agent, loaded and built on the first request it carries. In the all-in-one notes', stats' and
 * the mailer's requests are handed over in process (InProcessDispatcher) and only a file's bytes go over a
 * socket, so most processes never need undici: loading its hundred modules at start kept about 2 MB of
 * source text and compiled code in the heap for nothing (docs/performance.md, issue 35, "What the heap
 * holds"). `load()` builds it at once, for the separate gateway, whose every relayed request uses it.
 */
export class LazyAgent {
  private agent: Agent | undefined;

  constructor(private readonly options: Agent.Options) {}

  load(): Agent {
    if (!this.agent) {
      const { Agent: UndiciAgent } = require('undici') as typeof import('undici');
      this.agent = new UndiciAgent(this.options);
    }
    return this.agent;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.load().dispatch(options, handler);
  }

  async destroy(): Promise<void> {
    await this.agent?.destroy();
  }
}
