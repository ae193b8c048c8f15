export { a2aServiceDefinition, type DecodedRequest, GrpcBinding, type GrpcBindingOptions } from './binding.js';
export { grpcStatusOf, STATUS_DETAILS_KEY } from './errors.js';
export { A2A_PROTO_PATH, decodeToJson, encodeFromJson, PROTO_DIR, root as protoRoot, SERVICE_NAME } from './proto.js';
export { type GrpcServeOptions, type GrpcServer, serveGrpc } from './server.js';
