using System.Text.Json;

namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// What the database stores for one index, in its <c>Indexes</c> tree (key: the lowercased name):
/// the definition's JSON plus where its files are (<c>Folder</c>, unique per build, so a replacement
/// and the index it replaces never share one), what it replaces (<c>ReplacementOf</c>), its lock
/// mode, priority and whether it is disabled.
/// </summary>
public sealed record IndexRecord(IndexDefinition Definition, string Folder, string? ReplacementOf, IndexLockMode LockMode, IndexPriority Priority, bool Disabled)
{
    public string Name => Definition.Name;

    /// <summary>A fresh folder name for a new build of <paramref name="name"/>.</summary>
    public static string NewFolder(string name)
    {
        var folder = IndexDefinition.FolderName(name);
        var suffix = "-" + Guid.NewGuid().ToString("N")[..8];
        return folder.Length + suffix.Length > IndexDefinition.MaxFolderChars + 9 ? folder[..(IndexDefinition.MaxFolderChars - 9)] + suffix : folder + suffix;
    }

    public byte[] ToJson()
    {
        var json = Definition.ToJson();
        json["Folder"] = Folder;
        json["ReplacementOf"] = ReplacementOf;
        json["LockMode"] = LockMode.ToString();
        json["Priority"] = Priority.ToString();
        json["Disabled"] = Disabled;
        return JsonSerializer.SerializeToUtf8Bytes(json);
    }

    public static IndexRecord FromJson(JsonElement json)
    {
        var definition = IndexDefinition.FromStored(json);
        var folder = json.TryGetProperty("Folder", out var f) && f.ValueKind == JsonValueKind.String ? f.GetString()! : IndexDefinition.FolderName(definition.Name);
        var replacementOf = json.TryGetProperty("ReplacementOf", out var r) && r.ValueKind == JsonValueKind.String ? r.GetString() : null;
        var lockMode = json.TryGetProperty("LockMode", out var l) && Enum.TryParse<IndexLockMode>(l.GetString(), out var mode) ? mode : IndexLockMode.Unlock;
        var priority = json.TryGetProperty("Priority", out var p) && Enum.TryParse<IndexPriority>(p.GetString(), out var pr) ? pr : IndexPriority.Normal;
        var disabled = json.TryGetProperty("Disabled", out var d) && d.ValueKind == JsonValueKind.True;
        return new IndexRecord(definition, folder, replacementOf, lockMode, priority, disabled);
    }
}
