import type { Statement } from '@vanish/database';

/**
 * A multi-row INSERT as plain SQL, the same text on SQLite and MySQL, made once per row count.
 * For the creation batch (notes, receipts, outbox rows): knex's query builder sorted, wrapped and
 * checked every column of every row on each batch, which cost the notes service more CPU than
 * sending the statement (profiled under a create load). The values still travel as bindings.
 */
export class PlainInsert<Row extends object> {
  private readonly texts = new Map<number, string>();
  private readonly rowText: string;

  constructor(private readonly table: string, private readonly columns: ReadonlyArray<keyof Row & string>) {
    this.rowText = `(${columns.map(() => '?').join(', ')})`;
  }

  /** The INSERT of these rows (null for none), for runStatements (one message with the batch's other statements on SQLite). */
  statement(rows: readonly Row[]): Statement | null {
    if (rows.length === 0) return null;
    const values: unknown[] = [];
    for (const row of rows) for (const column of this.columns) values.push(row[column]);
    return { sql: this.textFor(rows.length), bindings: values };
  }

  private textFor(rowCount: number): string {
    let text = this.texts.get(rowCount);
    if (text === undefined) {
      // Backticks quote identifiers on MySQL and, for compatibility with it, on SQLite too.
      text = `insert into \`${this.table}\` (${this.columns.map((column) => `\`${column}\``).join(', ')}) values ${Array.from({ length: rowCount }, () => this.rowText).join(', ')}`;
      this.texts.set(rowCount, text);
    }
    return text;
  }
}
