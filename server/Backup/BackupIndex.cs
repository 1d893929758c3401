using System.Text.Json;
using System.Text.Json.Serialization;

namespace Jackdaw.Server.Backup;

/// <summary>The files of one index folder, as of the commit the backup held.</summary>
public sealed class BackupIndex
{
    /// <summary>The folder's name under the database's <c>Indexes/</c> (the index record names it).</summary>
    public string Folder { get; set; } = "";

    public List<BackupIndexFile> Files { get; set; } = [];
}
