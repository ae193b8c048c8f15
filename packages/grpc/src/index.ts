export { a2aServiceDefinition, type DecodedRequest, GrpcBinding, type GrpcBindingOptions } from './binding.js';
export { grpcStatusOf, STATUS_DETAILS_KEY } from './errors.js';
export {
  A2A_0_3_PROTO_PATH,
  A2A_PROTO_PATH,
  decodeToJson,
  encodeFromJson,
  PROTO_DIR,
  root as protoRoot,
  root0_3 as protoRoot0_3,
  SERVICE_NAME,
  SERVICE_NAME_0_3,
} from './proto.js';
export { type GrpcServeOptions, type GrpcServer, serveGrpc } from './server.js';
export { GRPC_0_3, GRPC_1_0, type GrpcServiceVersion } from './versions.js';
