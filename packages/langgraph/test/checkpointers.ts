/**
 * LangGraph's official checkpointers on the database of an A2A store URL, as the README shows:
 * `sqlite:<file>` → SqliteSaver on that file; `postgres://…?schema=<s>` → PostgresSaver in that schema.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

export interface SharedCheckpointer {
  checkpointer: BaseCheckpointSaver;
  close(): Promise<void>;
}

export async function checkpointerFor(storeUrl: string): Promise<SharedCheckpointer> {
  if (storeUrl.startsWith('sqlite:')) {
    const saver = SqliteSaver.fromConnString(storeUrl.slice('sqlite:'.length));
    return {
      checkpointer: saver,
      close: async () => {
        saver.db.close();
      },
    };
  }
  const url = new URL(storeUrl);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  const saver = PostgresSaver.fromConnString(url.href, { schema });
  await saver.setup();
  return { checkpointer: saver, close: () => saver.end() };
}
