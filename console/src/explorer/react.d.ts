// @types/react is not installed (the console itself is Preact); the explorer uses two React
// functions only, typed here as far as it uses them.
declare module 'react' {
  export function createElement(type: unknown, props?: Record<string, unknown> | null): unknown;
}
declare module 'react-dom/client' {
  export function createRoot(el: Element): { render(node: unknown): void; unmount(): void };
}
