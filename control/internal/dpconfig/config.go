// Package dpconfig holds the configuration of one e3-vswitchd, in the exact
// JSON shape of its config_dump / config_load methods (docs/control-api.md).
// It is also the desired config the controller writes to etcd for each node,
// so the agent's job is a diff between two values of this one type.
package dpconfig

// The objects' types (Config, Fragment, Settings, Port, ...) are generated
// from datapath/api/schema.yaml, in objects_gen.go.

// Version is the schema version of Config (the "version" field).
const Version = 1
