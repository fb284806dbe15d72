/** T with every field optional, recursively (arrays keep their element type partial): a draft of T as a file or a request states it. */
export type DeepPartial<T> = T extends (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;
