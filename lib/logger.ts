import { type Logger, pino } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/** Structured JSON logs; one logger per process, children per service. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'agent-commerce'): Logger {
  return pino({
    name,
    level: config.LOG_LEVEL,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
