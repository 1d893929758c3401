using System.Collections.Immutable;
using System.Text.Json.Serialization;
using System.Text.Json;
using Jackdaw.Server.Indexing.Analysis;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The cluster's state as of one log index: its members by tag, the database records (with
/// their index definitions, <c>ClusterState.Indexes.cs</c>, and analyzers, <c>ClusterState.Analyzers.cs</c>), their subscriptions and the
/// registered client certificates (<c>ClusterState.Certificates.cs</c>). Immutable:
/// <see cref="Apply"/> returns the next state, so readers take one reference and see one state.
/// The ids of the last <see cref="RememberedIds"/> applied commands are part of it (and of its
/// snapshots), so a retried command is applied once on every node.
/// </summary>
public sealed partial class ClusterState
{
    /// <summary>How many applied command ids are remembered to refuse a repeat.</summary>
    public const int RememberedIds = 10_000;

    private readonly ImmutableHashSet<string> _appliedIds;
    private readonly ImmutableQueue<string> _appliedOrder;

    private ClusterState(
        ImmutableSortedDictionary<string, string> members,
        ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases,
        ImmutableHashSet<string> appliedIds,
        ImmutableQueue<string> appliedOrder,
        long etag,
        ClusterSubscriptions subscriptions,
        ImmutableSortedDictionary<string, ClusterCertificate> certificates)
    {
        Certificates = certificates;
        Members = members;
        Databases = databases;
        Subscriptions = subscriptions;
        _appliedIds = appliedIds;
        _appliedOrder = appliedOrder;
        Etag = etag;
    }

    public static ClusterState Empty { get; } = new(
        ImmutableSortedDictionary.Create<string, string>(StringComparer.Ordinal),
        ImmutableSortedDictionary.Create<string, ClusterDatabaseRecord>(StringComparer.OrdinalIgnoreCase),
        ImmutableHashSet.Create<string>(StringComparer.Ordinal),
        ImmutableQueue<string>.Empty,
        0,
        ClusterSubscriptions.Empty,
        NoCertificates);

    private static ImmutableSortedDictionary<string, ClusterCertificate> NoCertificates =>
        ImmutableSortedDictionary.Create<string, ClusterCertificate>(StringComparer.OrdinalIgnoreCase);

    /// <summary>The members: tag → URL (how the other nodes reach it).</summary>
    public ImmutableSortedDictionary<string, string> Members { get; }

    /// <summary>The database records by name (ignoring case, as database names do).</summary>
    public ImmutableSortedDictionary<string, ClusterDatabaseRecord> Databases { get; }

    /// <summary>The subscriptions of the databases: definitions, mentors, acknowledged positions.</summary>
    public ClusterSubscriptions Subscriptions { get; }

    /// <summary>The registered client certificates by thumbprint (ignoring case): every node puts them in its own certificate store.</summary>
    public ImmutableSortedDictionary<string, ClusterCertificate> Certificates { get; }

    /// <summary>The log index of the last command that changed anything: <c>/cluster/topology</c>'s <c>Etag</c>.</summary>
    public long Etag { get; }

    public bool WasApplied(string commandId) => _appliedIds.Contains(commandId);

    /// <summary>The same state without the remembered command ids: what a node keeps to compare later states with.</summary>
    public ClusterState WithoutAppliedIds() => _appliedIds.IsEmpty ? this : new(Members, Databases, Empty._appliedIds, Empty._appliedOrder, Etag, Subscriptions, Certificates) { Joining = Joining, ClientConfiguration = ClientConfiguration, NodeCertificates = NodeCertificates };

    /// <summary>The same state with other database records (what a node saves as acted on may differ from the log's).</summary>
    internal ClusterState WithDatabases(ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases) =>
        new(Members, databases, _appliedIds, _appliedOrder, Etag, Subscriptions, Certificates) { Joining = Joining, ClientConfiguration = ClientConfiguration, NodeCertificates = NodeCertificates };

    /// <summary>The tag of the member at <paramref name="url"/> (compared as URLs), or null.</summary>
    public string? TagOf(string url)
    {
        foreach (var (tag, memberUrl) in Members)
        {
            if (ClusterUrls.Same(memberUrl, url))
            {
                return tag;
            }
        }
        return null;
    }

    /// <summary>
    /// The state after <paramref name="command"/> at log index <paramref name="index"/>, and why it
    /// changed nothing (null when it applied). A command already applied, or one that no longer fits
    /// (a database created twice in a race), changes nothing; each node decides alike.
    /// </summary>
    public (ClusterState State, string? Refused) Apply(ClusterCommand command, long index)
    {
        if (_appliedIds.Contains(command.Id))
        {
            return (this, null);
        }
        var members = Members;
        var databases = Databases;
        var subscriptions = Subscriptions;
        var certificates = Certificates;
        var joining = Joining;
        var nodeCertificates = NodeCertificates;
        var serverClientConfiguration = ClientConfiguration;
        string? refused = null;
        switch (command.Kind)
        {
            case var kind when ClusterSubscriptions.Handles(kind):
                (subscriptions, refused) = subscriptions.Apply(command, index, databases);
                break;
            case ClusterCommandKind.PutMember when command.Tag is { } tag && command.Url is { } url:
                // Two nodes added at once must not end up with one tag: the first committed wins.
                if (members.TryGetValue(tag, out var taken) && !ClusterUrls.Same(taken, url))
                {
                    refused = $"Tag {tag} is already taken by the member at {taken}.";
                    break;
                }
                if (TagOf(url) is { } other && other != tag)
                {
                    refused = $"The node at {url} is already a member, as {other}.";
                    break;
                }
                if (ReservationConflict(tag, url) is { } conflict)
                {
                    refused = conflict;
                    break;
                }
                members = members.SetItem(tag, url);
                joining = joining.Remove(tag);
                nodeCertificates = WithNodeCertificate(nodeCertificates, command, present: true);
                // A URL that changed is a topology change of every database on that node.
                databases = Touch(databases, d => d.Nodes.Contains(tag), index);
                break;
            case ClusterCommandKind.RemoveMember when command.Tag is { } tag:
                if (joining.ContainsKey(tag))
                {
                    // An add that did not complete: its reservation goes (and the member, if it is one).
                    joining = joining.Remove(tag);
                    nodeCertificates = WithNodeCertificate(nodeCertificates, command, present: false);
                    if (!members.ContainsKey(tag))
                    {
                        break;
                    }
                }
                if (!members.ContainsKey(tag))
                {
                    refused = $"Node '{tag}' is not a member of the cluster.";
                    break;
                }
                members = members.Remove(tag);
                nodeCertificates = WithNodeCertificate(nodeCertificates, command, present: false);
                foreach (var record in databases.Values.Where(d => d.Nodes.Contains(tag)).ToList())
                {
                    // A database the node held alone goes with it.
                    databases = record.Nodes.Count == 1
                        ? databases.Remove(record.Name)
                        : databases.SetItem(record.Name, FitPromotables(record with { Nodes = [.. record.Nodes.Where(n => n != tag)], TopologyEtag = index }));
                }
                break;
            case ClusterCommandKind.PutDatabase when command.Database is { } name && command.Nodes is { } nodes:
                if (Jackdaw.Server.Databases.DatabaseNames.Validate(name) is { } problem)
                {
                    // Refused here too, so an entry written by a node that did not check changes nothing anywhere.
                    refused = problem;
                    break;
                }
                if (databases.ContainsKey(name))
                {
                    refused = $"Database '{name}' already exists.";
                    break;
                }
                if (nodes.Count == 0)
                {
                    refused = $"Database '{name}' needs at least one node.";
                    break;
                }
                if (nodes.FirstOrDefault(n => !members.ContainsKey(n)) is { } stranger)
                {
                    // A member removed between the leader's check and this commit.
                    refused = $"Node '{stranger}' is not a member of the cluster.";
                    break;
                }
                databases = databases.Add(name, new ClusterDatabaseRecord(name, [.. nodes], index)
                {
                    CreatedIndex = index,
                    Settings = command.Settings ?? new Dictionary<string, string>(),
                });
                break;
            case ClusterCommandKind.AddDatabaseNode when command.Database is { } name && command.Tag is { } tag:
                if (!databases.TryGetValue(name, out var existing))
                {
                    refused = $"Database '{name}' does not exist.";
                    break;
                }
                if (!members.ContainsKey(tag))
                {
                    refused = $"Node '{tag}' is not a member of the cluster.";
                    break;
                }
                if (existing.Nodes.Contains(tag))
                {
                    refused = $"Database '{name}' is already on node '{tag}'.";
                    break;
                }
                databases = databases.SetItem(existing.Name, WithPromotable(existing, tag, command.Mentor, index));
                break;
            case ClusterCommandKind.DeleteDatabase when command.Database is { } name:
                if (!databases.TryGetValue(name, out var deleted))
                {
                    refused = $"Database '{name}' does not exist.";
                    break;
                }
                var left = command.Nodes is null ? [] : deleted.Nodes.Where(n => !command.Nodes.Contains(n)).ToList();
                databases = left.Count == 0
                    ? databases.Remove(name)
                    : databases.SetItem(deleted.Name, FitPromotables(deleted with { Nodes = left, TopologyEtag = index }));
                break;
            case ClusterCommandKind.PutIndexes or ClusterCommandKind.DeleteIndexes or ClusterCommandKind.SetIndexLock or ClusterCommandKind.SetIndexPriority
                when command.Database is { } name && command.Indexes is { Count: > 0 } changes:
                if (!databases.TryGetValue(name, out var indexed))
                {
                    refused = $"Database '{name}' does not exist.";
                    break;
                }
                (var indexes, refused) = ApplyIndexes(command.Kind, indexed.Indexes, changes);
                if (refused is null)
                {
                    databases = databases.SetItem(indexed.Name, indexed with { Indexes = indexes });
                }
                break;
            case var kind when IsBackupCommand(kind) && command.Database is { } name && command.Backup is { } change:
                if (!databases.TryGetValue(name, out var backedUp))
                {
                    refused = $"Database '{name}' does not exist.";
                    break;
                }
                (var withBackups, refused) = ApplyBackup(command, backedUp, change, index);
                if (refused is null)
                {
                    databases = databases.SetItem(backedUp.Name, withBackups);
                }
                break;
            case ClusterCommandKind.ReserveMember:
                (joining, refused) = ApplyReserve(command, members, joining);
                if (refused is null)
                {
                    nodeCertificates = WithNodeCertificate(nodeCertificates, command, present: true);
                }
                break;
            case ClusterCommandKind.SetConflictSolver:
                (databases, refused) = ApplyConflictSolver(command, databases);
                break;
            case ClusterCommandKind.SetRevisionsConfiguration or ClusterCommandKind.SetRevisionsConflictsConfiguration:
                (databases, refused) = ApplyRevisionsConfiguration(command, databases);
                break;
            case ClusterCommandKind.PutClientConfiguration:
                (databases, serverClientConfiguration, refused) = ApplyClientConfiguration(command, index, databases, serverClientConfiguration);
                break;
            case ClusterCommandKind.PromoteDatabaseNode:
                (databases, refused) = ApplyPromotion(command, databases, index);
                break;
            case ClusterCommandKind.PromoteAnsweringRehab:
                (databases, refused) = ApplyRehabRescue(command, databases, index);
                break;
            case ClusterCommandKind.SetDatabaseNodeMentor or ClusterCommandKind.DemoteDatabaseNode:
                (databases, refused) = ApplyMentorOrDemotion(command, databases, index);
                break;
            case ClusterCommandKind.PutAnalyzers or ClusterCommandKind.DeleteAnalyzer:
                (databases, refused) = ApplyAnalyzers(command, databases);
                break;
            case ClusterCommandKind.PutCertificates or ClusterCommandKind.DeleteCertificate:
                (certificates, refused) = ApplyCertificates(command, certificates);
                break;
            default:
                refused = $"The command {command.Kind} lacks a field it needs.";
                break;
        }
        if (!ReferenceEquals(databases, Databases))
        {
            subscriptions = subscriptions.Fit(databases);
            databases = FitBackups(databases);
        }
        var ids = _appliedIds;
        var order = _appliedOrder;
        // Acknowledgements (one per subscription batch) are not remembered: they would push the
        // ids of rarer commands (a database create a client may retry) out of the window, and one
        // applied again only sets a position that was stored before (a resend, never a skip).
        // Backup statuses (one per run) likewise: one applied again puts back a status stored before.
        if (command.Kind is not (ClusterCommandKind.AcknowledgeSubscription or ClusterCommandKind.UpdateBackupStatus))
        {
            ids = ids.Add(command.Id);
            order = order.Enqueue(command.Id);
            if (ids.Count > RememberedIds)
            {
                order = order.Dequeue(out var oldest);
                ids = ids.Remove(oldest);
            }
        }
        return (new ClusterState(members, databases, ids, order, refused is null ? index : Etag, subscriptions, certificates) { Joining = joining, ClientConfiguration = serverClientConfiguration, NodeCertificates = nodeCertificates }, refused);
    }

    private static ImmutableSortedDictionary<string, ClusterDatabaseRecord> Touch(
        ImmutableSortedDictionary<string, ClusterDatabaseRecord> databases, Func<ClusterDatabaseRecord, bool> which, long index)
    {
        foreach (var record in databases.Values.Where(which).ToList())
        {
            databases = databases.SetItem(record.Name, record with { TopologyEtag = index });
        }
        return databases;
    }

    /// <summary>The state as a snapshot's JSON (members, records, remembered ids oldest first, etag).</summary>
    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(new Snapshot(
        Members.ToDictionary(),
        [.. Databases.Values.Select(d => new SnapshotDatabase(d.Name, [.. d.Nodes], d.TopologyEtag, d.Settings.ToDictionary()) { Indexes = [.. d.Indexes.Values], CreatedIndex = d.CreatedIndex, Backups = d.Backups.IsEmpty ? null : [.. d.Backups.Values], ConflictSolver = d.ConflictSolver, ClientConfiguration = d.ClientConfiguration, Promotables = d.Promotables.IsEmpty ? null : d.Promotables.ToDictionary(), Rehabs = d.Rehabs.IsEmpty ? null : d.Rehabs.ToDictionary(), Analyzers = d.Analyzers.IsEmpty ? null : [.. d.Analyzers.Values], RevisionsConfiguration = d.RevisionsConfiguration, RevisionsConflictsConfiguration = d.RevisionsConflictsConfiguration })],
        [.. _appliedOrder],
        Etag)
    {
        Subscriptions = [.. Subscriptions.All().Select(s => new SnapshotSubscription(s.Database, s.Subscription))],
        Certificates = [.. Certificates.Values],
        Joining = Joining.IsEmpty ? null : Joining.ToDictionary(),
        ClientConfiguration = ClientConfiguration,
        NodeCertificates = NodeCertificates.IsEmpty ? null : NodeCertificates.ToDictionary(),
    });

    /// <summary>The state a snapshot written by <see cref="ToJson"/> holds.</summary>
    public static ClusterState FromJson(ReadOnlySpan<byte> json)
    {
        var snapshot = JsonSerializer.Deserialize<Snapshot>(json) ?? throw new InvalidDataException("The cluster snapshot is empty.");
        var state = Empty;
        var members = state.Members.AddRange(snapshot.Members);
        var databases = state.Databases.AddRange(snapshot.Databases.Select(d =>
            KeyValuePair.Create(d.Name, new ClusterDatabaseRecord(d.Name, d.Nodes, d.TopologyEtag)
            {
                Settings = d.Settings,
                CreatedIndex = d.CreatedIndex,
                ConflictSolver = d.ConflictSolver,
                ClientConfiguration = d.ClientConfiguration,
                // Snapshots written before promotables were kept have none (every node a member).
                Promotables = ClusterDatabaseRecord.NoPromotables.AddRange(d.Promotables ?? []),
                Rehabs = ClusterDatabaseRecord.NoPromotables.AddRange(d.Rehabs ?? []),
                // Snapshots written before revisions configurations were in the record have none.
                RevisionsConfiguration = d.RevisionsConfiguration,
                RevisionsConflictsConfiguration = d.RevisionsConflictsConfiguration,
                // Snapshots written before indexes were part of the state have none.
                Indexes = ClusterDatabaseRecord.NoIndexes.AddRange((d.Indexes ?? []).Select(i => KeyValuePair.Create(i.Name, i))),
                // Snapshots written before backup tasks were part of the state have none.
                Backups = ClusterDatabaseRecord.NoBackups.AddRange((d.Backups ?? []).Select(b => KeyValuePair.Create(b.TaskId, b))),
                // Snapshots written before analyzers were part of the state have none.
                Analyzers = ClusterDatabaseRecord.NoAnalyzers.AddRange((d.Analyzers ?? []).Select(a => KeyValuePair.Create(a.Name, a))),
            })));
        // Snapshots written before subscriptions were in the cluster's state have none.
        var subscriptions = ClusterSubscriptions.From((snapshot.Subscriptions ?? []).Select(s => (s.Database, s.Subscription)));
        // Snapshots written before certificates were in the cluster's state have none.
        var certificates = NoCertificates.AddRange((snapshot.Certificates ?? []).Select(c => KeyValuePair.Create(c.Thumbprint, c)));
        return new ClusterState(members, databases, [.. snapshot.AppliedIds], [.. snapshot.AppliedIds], snapshot.Etag, subscriptions, certificates)
        {
            // Snapshots written before reservations were kept have none.
            Joining = NoMembers.AddRange(snapshot.Joining ?? []),
            ClientConfiguration = snapshot.ClientConfiguration,
            NodeCertificates = NoMembers.AddRange(snapshot.NodeCertificates ?? []),
        };
    }

    private sealed record Snapshot(Dictionary<string, string> Members, List<SnapshotDatabase> Databases, List<string> AppliedIds, long Etag)
    {
        public List<SnapshotSubscription>? Subscriptions { get; init; }

        public List<ClusterCertificate>? Certificates { get; init; }

        public Dictionary<string, string>? Joining { get; init; }

        public ClusterClientConfiguration? ClientConfiguration { get; init; }

        public Dictionary<string, string>? NodeCertificates { get; init; }
    }

    private sealed record SnapshotSubscription(string Database, ClusterSubscription Subscription);

    private sealed record SnapshotDatabase(string Name, List<string> Nodes, long TopologyEtag, Dictionary<string, string> Settings)
    {
        public long CreatedIndex { get; init; }

        public List<ClusterIndex>? Indexes { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public List<ClusterBackupTask>? Backups { get; init; }

        public string? ConflictSolver { get; init; }

        public ClusterClientConfiguration? ClientConfiguration { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public Dictionary<string, string>? Promotables { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public Dictionary<string, string>? Rehabs { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public List<AnalyzerDefinition>? Analyzers { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public string? RevisionsConfiguration { get; init; }

        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public string? RevisionsConflictsConfiguration { get; init; }
    }
}
