// Files imported `with { type: "file" }` are embedded in the binary and arrive as a path.
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}

declare module "*.txt" {
  const text: string;
  export default text;
}
