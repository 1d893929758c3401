using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Documents;

/// <summary>One database: its folder and, opened on first use, its storage.</summary>
public sealed class DocumentDatabase : IAsyncDisposable
{
    private DocumentDatabase(string name, string folder)
    {
        Name = name;
        Folder = folder;
    }

    public string Name { get; }

    public string Folder { get; }

    public static DocumentDatabase Open(string name, string folder, ServerContext server)
    {
        ArgumentNullException.ThrowIfNull(server);
        return new DocumentDatabase(name, folder);
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
