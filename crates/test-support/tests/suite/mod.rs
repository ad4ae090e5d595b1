mod mcp_client;
mod mock_server;
