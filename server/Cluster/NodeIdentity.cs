using System.Text.Json;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Who this node is in its cluster, kept in <c>System/Cluster/node.json</c>: its tag, the URL it
/// was added with, and whether it founded the cluster (it starts Raft as the first member). Absent on a server that never formed or joined a cluster (a lone node, tag A, no
/// Raft running). Written whole to a temporary file, flushed, then renamed over the old one, so a
/// crash leaves the old identity or the new, never half of one.
/// </summary>
public sealed record NodeIdentity(string Tag, string Url, bool Founder)
{
    public const string FileName = "node.json";

    /// <summary>The identity in <paramref name="folder"/>, or null when the node has none yet.</summary>
    public static NodeIdentity? Load(string folder)
    {
        var path = Path.Combine(folder, FileName);
        if (!File.Exists(path))
        {
            return null;
        }
        try
        {
            return JsonSerializer.Deserialize<NodeIdentity>(File.ReadAllBytes(path))
                ?? throw new InvalidDataException("empty");
        }
        catch (Exception e) when (e is JsonException or InvalidDataException)
        {
            throw new InvalidOperationException($"The cluster identity {path} cannot be read ({e.Message}); restore it from a backup of the data folder, or remove System/Cluster to start this node afresh (it then has to be added to its cluster again).", e);
        }
    }

    public void Save(string folder)
    {
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, FileName);
        var temporary = path + ".tmp";
        using (var file = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            file.Write(JsonSerializer.SerializeToUtf8Bytes(this));
            file.Flush(flushToDisk: true);
        }
        File.Move(temporary, path, overwrite: true);
        // The rename itself must survive a power loss: without node.json the node would start lone, as A.
        Storage.Engine.FileDurability.SyncFolder(folder);
    }
}
