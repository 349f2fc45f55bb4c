"""The worker application, its scheduling, the local stack and CLI wiring."""

import os

# gRPC's C core logs every keep-alive GOAWAY from the Milvus Lite server at ERROR
# level; pymilvus raises the failures that matter as exceptions anyway.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
