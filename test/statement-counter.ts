import type { KyselyPlugin, PluginTransformQueryArgs, RootOperationNode } from 'kysely';

/**
 * Counts the statements sent through a Kysely instance it is plugged into (BEGIN and COMMIT are
 * not among them): the kind of each, in order.
 */
export class StatementCounter implements KyselyPlugin {
  statements: string[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements.push(args.node.kind);
    return args.node;
  }
  async transformResult<T>(args: { result: T }): Promise<T> {
    return args.result;
  }
}
