// The wire models, JSON, requests and errors live in CloudKitModels (no I/O, so the browser's pure
// core can import them without linking networking); `import CloudKitWeb` brings them along.
@_exported import CloudKitModels
