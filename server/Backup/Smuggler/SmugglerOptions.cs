namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// What an export or import works on: RavenDB's <c>DatabaseSmugglerOptions</c>, the part Jackdaw
/// honours (see <see cref="SmugglerOptionsJson"/> for the rest of RavenDB's members and what is
/// done with them).
/// </summary>
public abstract class SmugglerOptions
{
    /// <summary>RavenDB's default <c>OperateOnTypes</c>: everything but tombstones and compare-exchange tombstones.</summary>
    public const DatabaseItemType DefaultTypes = DatabaseItemType.Indexes | DatabaseItemType.Documents | DatabaseItemType.RevisionDocuments
        | DatabaseItemType.Conflicts | DatabaseItemType.DatabaseRecord | DatabaseItemType.ReplicationHubCertificates | DatabaseItemType.Identities
        | DatabaseItemType.CompareExchange | DatabaseItemType.Attachments | DatabaseItemType.CounterGroups | DatabaseItemType.Subscriptions
        | DatabaseItemType.TimeSeries | DatabaseItemType.TimeSeriesDeletedRanges;

    public DatabaseItemType OperateOnTypes { get; set; } = DefaultTypes;

    /// <summary>False: documents whose <c>@metadata.@expires</c> has passed are left out.</summary>
    public bool IncludeExpired { get; set; } = true;

    /// <summary>Index definitions lose the <c>Analyzer</c> of their fields (RavenDB's option, for a target without those analyzers).</summary>
    public bool RemoveAnalyzers { get; set; }

    /// <summary>The collections to work on (any casing); empty: all, and documents of no collection too.</summary>
    public IReadOnlyList<string> Collections { get; set; } = [];

    internal bool Includes(DatabaseItemType type) => (OperateOnTypes & type) == type;

    internal bool IncludesCollection(ReadOnlySpan<char> collection)
    {
        if (Collections.Count == 0)
        {
            return true;
        }
        foreach (var wanted in Collections)
        {
            if (collection.Equals(wanted, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }
        return false;
    }
}
