/** The rows only the Postgres store reads; the rows both SQL stores read are in @fastify-a2a/core. */

import type { TaskRow } from '@fastify-a2a/core';

/** A row of a listTasks statement: the total, and a page row's columns (NULL when the page is empty). */
export interface ListedRow extends Omit<TaskRow, 'task'> {
  total: number;
  task: string | null;
  status_ts: string | number | null;
  task_id: string | null;
}
