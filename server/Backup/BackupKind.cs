namespace Jackdaw.Server.Backup;

/// <summary>The kinds of file a binary backup chain holds (a logical chain: <see cref="Full"/> and <see cref="Incremental"/>).</summary>
public enum BackupKind
{
    /// <summary>A snapshot: every page, every index's files, as of one transaction.</summary>
    Full,

    /// <summary>The journal records since the previous file of the chain.</summary>
    Incremental,

    /// <summary>The newest version of each page those records touched, merged.</summary>
    MinimalIncremental,
}
