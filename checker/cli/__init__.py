"""Front ends: the `gpcheck` command (command, commands/), the language server (lsp), the pytest plugin, the files a command reads and writes (outputs), the documentation finder (manual).

May import: everything below it; nothing imports it."""
