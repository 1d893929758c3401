using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Promotables and rehabs (RavenDB's DatabaseTopology): every second, each node looks at the
/// promotables and rehabs it mentors, reads how far its replication sender reached each (<see cref="IReplicationTopologySink.ProgressTo"/>)
/// and, once <see cref="PromotionCriterion"/> says it caught up, asks the leader to promote it (on
/// the leader itself, else through <see cref="PromotionPath"/>, which only node certificates may
/// use); the leader judges the progress again and commits <see cref="ClusterCommandKind.PromoteDatabaseNode"/>.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>Where a mentor that does not lead sends the promotion of a promotable to the leader.</summary>
    public const string PromotionPath = "/admin/cluster/promotions";

    /// <summary>How often a mentor observes its promotables: the criterion compares two observations this far apart.</summary>
    private static readonly TimeSpan PromotionCheckEvery = TimeSpan.FromSeconds(1);

    private Task _watchingPromotables = Task.CompletedTask;

    /// <summary>
    /// On the leader: commits the promotion a mentor asked for, after judging its progress again;
    /// returns the log index. Refused (<see cref="ClusterException"/>) when the progress does not show
    /// the node caught up, or the node is no promotable of that mentor (the state refuses it too).
    /// </summary>
    /// <exception cref="NotLeaderException">This node does not lead.</exception>
    public async Task<long> PromoteAsync(ClusterCommand command, CancellationToken token)
    {
        if (command is not { Kind: ClusterCommandKind.PromoteDatabaseNode, Database: { } database, Tag: { } tag, Mentor: { } mentor, Progress: { IndexesCaughtUp: not null } progress })
        {
            throw new BadRequestException("The body must be a PromoteDatabaseNode command of the cluster, with its Database, Tag, Mentor and Progress (its IndexesCaughtUp included).");
        }
        if (!IsLeader)
        {
            throw NotLeader();
        }
        if (PromotionCriterion.NotReady(progress, RecordOf(database)?.Indexes.Keys ?? []) is var (status, reason))
        {
            throw new ClusterException($"Promotable '{tag}' of database '{database}' has not caught up with its mentor {mentor} ({status}): {reason}");
        }
        var index = await ExecuteAsync(command, token).ConfigureAwait(false);
        LogPromoted(_logger, tag, database, mentor, progress.Acknowledged);
        return index;
    }

    /// <summary>How long a member may not answer the leader before it is demoted to a rehab of its databases (RavenDB's <c>MoveToRehabGraceTime</c>).</summary>
    public static TimeSpan RehabAfter { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// On the leader, every second (with the subscriptions' mentors): a promotable or rehab whose
    /// mentor has not answered for <see cref="MentorDownAfter"/> gets another mentor (the first member
    /// that answers); a member that has not answered for <see cref="RehabAfter"/> is demoted to a rehab
    /// of each of its databases (never the last member that answers), so clients leave it until it
    /// caught up again.
    /// </summary>
    private async Task WatchDatabaseNodesAsync(ClusterState state, Dictionary<string, DateTime> downSince, DateTime now, CancellationToken token)
    {
        TimeSpan? DownFor(string tag) => downSince.TryGetValue(tag, out var since) ? now - since : null;
        foreach (var command in DatabaseNodesWatch.Plan(state, DownFor, MentorDownAfter, RehabAfter))
        {
            await ExecuteAsync(command, token).ConfigureAwait(false);
            if (command.Kind == ClusterCommandKind.DemoteDatabaseNode)
            {
                LogDemoted(_logger, command.Tag!, command.Database!, command.Mentor!);
            }
            else if (command.Kind == ClusterCommandKind.PromoteAnsweringRehab)
            {
                LogRehabRescued(_logger, command.Tag!, command.Database!);
            }
            else
            {
                LogMentorReplaced(_logger, command.Tag!, command.Database!, command.Mentor!);
            }
        }
    }

    private async Task WatchPromotablesAsync(CancellationToken token)
    {
        // The mentor's last etag and last revision etag at the previous observation of each promotable it mentors.
        var earlier = new Dictionary<(string Database, string Tag), (long Etag, long RevisionEtag)>();
        // The promotable's own last etag at the previous observation (what its indexes are judged against).
        var earlierOfPromotable = new Dictionary<(string Database, string Tag), long>();
        using var http = _http.CreateClient(PromotionCheckEvery * 2);
        using var timer = new PeriodicTimer(PromotionCheckEvery);
        while (await timer.WaitForNextTickAsync(token).ConfigureAwait(false))
        {
            try
            {
                if (!IsClustered)
                {
                    earlier.Clear();
                    earlierOfPromotable.Clear();
                    continue;
                }
                var me = NodeTag;
                var mentored = new HashSet<(string Database, string Tag)>();
                foreach (var record in State.Databases.Values)
                {
                    foreach (var (tag, mentor) in record.Promotables.Concat(record.Rehabs))
                    {
                        if (mentor != me)
                        {
                            continue;
                        }
                        var key = (record.Name, tag);
                        mentored.Add(key);
                        try
                        {
                            if (Replication.ProgressTo(record.Name, tag) is not { } seen)
                            {
                                earlier.Remove(key);
                                earlierOfPromotable.Remove(key);
                                continue;
                            }
                            var was = earlier.TryGetValue(key, out var before) ? before : ((long Etag, long RevisionEtag)?)null;
                            var progress = new PromotableProgress(seen.Connected, seen.Acknowledged, seen.LastEtag, was?.Etag)
                            {
                                AcknowledgedRevision = seen.AcknowledgedRevision,
                                EarlierMentorRevisionEtag = was?.RevisionEtag,
                            };
                            earlier[key] = (seen.LastEtag, seen.LastRevisionEtag);
                            if (PromotionCriterion.NotReady(progress) is not null)
                            {
                                // Its indexes are judged against its etag of the observation just before, never an older one.
                                earlierOfPromotable.Remove(key);
                                continue;
                            }
                            progress = progress with { IndexesCaughtUp = await IndexesCaughtUpAsync(http, record, tag, earlierOfPromotable, token).ConfigureAwait(false) };
                            if (PromotionCriterion.NotReady(progress, record.Indexes.Keys) is not null)
                            {
                                continue;
                            }
                            var command = new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.PromoteDatabaseNode)
                            {
                                Database = record.Name,
                                Tag = tag,
                                Mentor = me,
                                Progress = progress,
                            };
                            if (IsLeader)
                            {
                                await PromoteAsync(command, token).ConfigureAwait(false);
                            }
                            else
                            {
                                await SendToLeaderAsync(command, token, PromotionPath).ConfigureAwait(false);
                            }
                        }
                        catch (Exception e) when (!token.IsCancellationRequested)
                        {
                            // This one is observed again on the next tick; the others go on (a leader
                            // changing, a copy not open yet, the state moved on).
                            LogPromotionFailed(_logger, e.Message);
                        }
                    }
                }
                foreach (var key in earlier.Keys.Concat(earlierOfPromotable.Keys).Where(k => !mentored.Contains(k)).ToList())
                {
                    earlier.Remove(key);
                    earlierOfPromotable.Remove(key);
                }
            }
            catch (Exception e) when (!token.IsCancellationRequested)
            {
                // Observed again on the next tick (a leader changing, a copy not open yet, the state moved on).
                LogPromotionFailed(_logger, e.Message);
            }
        }
    }

    /// <summary>
    /// Asks promotable <paramref name="tag"/> which of its indexes of <paramref name="record"/>'s
    /// database processed everything its copy held at the previous observation
    /// (<c>/indexes/caught-up</c>), and remembers its last etag now for the next: the indexes that
    /// do not hold the promotion back. Those too that cannot catch up by themselves there (in error,
    /// disabled, idle: an auto-index nobody queries on a node that is not served yet), and the
    /// record's indexes this mentor lacks as well (failing everywhere, they would block every
    /// promotion); one stopped by an operator holds it back until it is started. None on the first
    /// observation, or when the promotable does not answer (observed again on the next tick); no
    /// call at all for a record without indexes.
    /// </summary>
    private async Task<IReadOnlyList<string>> IndexesCaughtUpAsync(HttpClient http, ClusterDatabaseRecord record, string tag, Dictionary<(string, string), long> earlier, CancellationToken token)
    {
        var key = (record.Name, tag);
        if (record.Indexes.IsEmpty)
        {
            earlier.Remove(key);
            return [];
        }
        if (!State.Members.TryGetValue(tag, out var url))
        {
            return [];
        }
        var upTo = earlier.TryGetValue(key, out var before) ? before : (long?)null;
        var address = $"{url.TrimEnd('/')}/databases/{Uri.EscapeDataString(record.Name)}/indexes/caught-up" + (upTo is { } etag ? $"?upTo={etag}" : "");
        using var response = await http.GetAsync(address, token).ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            earlier.Remove(key);
            return [];
        }
        using var json = await JsonDocument.ParseAsync(await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false), cancellationToken: token).ConfigureAwait(false);
        earlier[key] = json.RootElement.GetProperty("LastEtag").GetInt64();
        if (upTo is null)
        {
            return [];
        }
        var caughtUp = new List<string>();
        foreach (var index in json.RootElement.GetProperty("Indexes").EnumerateArray())
        {
            if (!PromotionCriterion.HoldsBack(index.GetProperty("CaughtUp").GetBoolean(), index.GetProperty("State").GetString()))
            {
                caughtUp.Add(index.GetProperty("Name").GetString()!);
            }
        }
        if (_databases().Names.Contains(record.Name, StringComparer.OrdinalIgnoreCase))
        {
            var mine = IndexStore.Of(_databases().GetDatabase(record.Name));
            caughtUp.AddRange(record.Indexes.Keys.Where(name => mine.TryGet(name) is null));
        }
        return caughtUp;
    }

    [LoggerMessage(EventId = 753, Level = LogLevel.Warning, Message = "No member of database {Database} has answered for long: rehab {Tag}, which answers, is made a member (it holds everything up to its demotion)")]
    private static partial void LogRehabRescued(ILogger logger, string tag, string database);

    [LoggerMessage(EventId = 798, Level = LogLevel.Information, Message = "Node {Tag} of database {Database} is mentored by node {Mentor} now: its mentor did not answer")]
    private static partial void LogMentorReplaced(ILogger logger, string tag, string database, string mentor);

    [LoggerMessage(EventId = 799, Level = LogLevel.Warning, Message = "Node {Tag} has not answered for long: demoted to a rehab of database {Database} (mentor {Mentor}) until it caught up again")]
    private static partial void LogDemoted(ILogger logger, string tag, string database, string mentor);

    [LoggerMessage(EventId = 796, Level = LogLevel.Information, Message = "Node {Tag} caught up with database {Database} (its mentor {Mentor} sent up to etag {Etag}): promoted to member")]
    private static partial void LogPromoted(ILogger logger, string tag, string database, string mentor, long etag);

    [LoggerMessage(EventId = 797, Level = LogLevel.Information, Message = "A promotion of a promotable this node mentors did not go through (observed again): {Error}")]
    private static partial void LogPromotionFailed(ILogger logger, string error);
}
