/**
 * Wraps async resolvers so that what they throw goes through one mapping (a subgraph's domain
 * errors → GraphQL errors with their codes); anything the mapping does not know passes as is.
 */
export const mappingErrors =
  (toGraphQL: (err: unknown) => unknown) =>
  <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    try {
      return await fn(...args);
    } catch (err) {
      throw toGraphQL(err);
    }
  };
