import type { AuditLog } from '../audit/log.ts';
import type { ActivityStore } from './store.ts';

/**
 * The audit log, feeding the activity store as entries are appended: an identity is "seen"
 * exactly when one of its calls is audited (every route of the chain, refused calls included),
 * with the entry's own time. Calls without a verified identity are not counted (anyone could
 * send them, and they name nobody).
 */
export function feedingActivity(log: AuditLog, activity: ActivityStore): AuditLog {
  return {
    append(entry) {
      log.append(entry);
      if (entry.identity) activity.record(entry.identity, entry.at);
    },
    flush: () => log.flush(),
    read: (fromSeq, limit) => log.read(fromSeq, limit),
    query: (q) => log.query(q),
  };
}
