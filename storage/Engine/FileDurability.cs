using Jackdaw.Storage.Engine.Native;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// fsync for files other parts of the server write themselves (index files): the same primitives
/// the engine uses for its own.
/// </summary>
public static class FileDurability
{
    /// <summary>Makes the file's contents durable (fsync on a fresh descriptor: it covers every write to the file, whoever made it).</summary>
    public static void SyncFile(string path)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        Posix.DataSync(file);
    }

    /// <summary>Makes a folder's entries (files created, renamed, deleted) durable.</summary>
    public static void SyncFolder(string folder) => Posix.SyncFolder(folder);
}
