# want "frontend.jsonnet in .*jsonnet-directory: Jsonnet is not rendered, so what it makes is not linted"
local port = 8080;
{
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'frontend' },
  spec: { ports: [{ port: port }] },
}
