using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Jackdaw.Server.Errors;
using NotLeaderException = Jackdaw.Server.Errors.NotLeaderException;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Subscriptions of clustered databases: their changes and acknowledgements are commands; the
/// leader chooses each one's mentor and gives it to another node when the mentor stops answering.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>Where a member that does not lead sends a subscription command to the leader.</summary>
    public const string SubscriptionCommandPath = "/admin/cluster/subscription-commands";

    /// <summary>How long a mentor may not answer the leader before its subscriptions go to another node.</summary>
    public static TimeSpan MentorDownAfter { get; set; } = TimeSpan.FromSeconds(3);

    private Task _watchingMentors = Task.CompletedTask;

    /// <summary>
    /// Commits a subscription command: on the leader (which chooses the mentor of a new subscription
    /// when none is given: spread by a hash of its name, among the database's nodes that answer),
    /// else passed on to it. Unless it is an acknowledgement, returns once this node applied it.
    /// </summary>
    /// <exception cref="ClusterException">The state refused it.</exception>
    /// <exception cref="NotLeaderException">No leader, or it did not answer.</exception>
    public async Task<long> ProposeSubscriptionAsync(ClusterCommand command, CancellationToken token)
    {
        if (!ClusterSubscriptions.Handles(command.Kind))
        {
            throw new ClusterException($"{command.Kind} is not a subscription command.");
        }
        long index;
        if (IsLeader)
        {
            if (command is { Kind: ClusterCommandKind.PutSubscription, Subscription: { Mentor: null } change, Database: { } database }
                && State.Databases.TryGetValue(database, out var record))
            {
                var status = MemberStatus;
                command = command with { Subscription = change with { Mentor = ClusterSubscriptions.ChooseMentor(change.Name, record.Nodes, t => (t == NodeTag || status.GetValueOrDefault(t)) && !record.IsCatchingUp(t)) } };
            }
            index = await ExecuteAsync(command, token).ConfigureAwait(false);
        }
        else
        {
            index = await SendToLeaderAsync(command, token).ConfigureAwait(false);
        }
        if (command.Kind != ClusterCommandKind.AcknowledgeSubscription)
        {
            // Committed; this node applies it when it hears of the commit (the next heartbeat).
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while (!State.WasApplied(command.Id) && DateTime.UtcNow < deadline)
            {
                await Task.Delay(10, token).ConfigureAwait(false);
            }
            if (!State.WasApplied(command.Id))
            {
                throw new NotLeaderException($"The change of subscription '{command.Subscription?.Name}' was committed, but node {NodeTag} has not applied it within 30 s; retry on another node, or here shortly.");
            }
        }
        return index;
    }

    private async Task<long> SendToLeaderAsync(ClusterCommand command, CancellationToken token, string path = SubscriptionCommandPath)
    {
        if (await WaitForLeaderAsync(TimeSpan.FromSeconds(5), token).ConfigureAwait(false) is not var (_, leaderUrl))
        {
            throw NotLeader();
        }
        using var content = new ByteArrayContent(ClusterStateMachine.Serialize(command));
        content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
        HttpResponseMessage response;
        try
        {
            response = await LeaderClient.PostAsync(leaderUrl + path, content, token).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new NotLeaderException($"The leader at {leaderUrl} did not answer ({e.Message}); retry shortly.");
        }
        using (response)
        {
            var body = await response.Content.ReadAsStringAsync(token).ConfigureAwait(false);
            if (response.IsSuccessStatusCode)
            {
                using var json = JsonDocument.Parse(body);
                return json.RootElement.GetProperty("RaftCommandIndex").GetInt64();
            }
            var message = body;
            try
            {
                using var error = JsonDocument.Parse(body);
                message = error.RootElement.TryGetProperty("Message", out var m) ? m.GetString() ?? body : body;
            }
            catch (JsonException)
            {
            }
            if (response.StatusCode == HttpStatusCode.ServiceUnavailable)
            {
                throw new NotLeaderException(message);
            }
            throw new ClusterException(message);
        }
    }

    /// <summary>
    /// Puts the subscriptions of this node's database <paramref name="database"/> in the cluster's
    /// state (a lone server founding a cluster), this node their mentor, each from the position it
    /// had acknowledged; the database's store then serves the cluster's and forgets its own.
    /// </summary>
    private async Task RecordLocalSubscriptionsAsync(string database, CancellationToken token)
    {
        try
        {
            var local = _databases().GetDatabase(database);
            foreach (var subscription in Subscriptions.SubscriptionStore.Of(local).Subscriptions)
            {
                if (subscription.Cluster is not null || State.Subscriptions.Of(database).ContainsKey(subscription.Record.Name))
                {
                    continue;
                }
                var record = subscription.Record;
                await ExecuteAsync(new ClusterCommand($"found/subscriptions/{database}/{record.Name}", ClusterCommandKind.PutSubscription)
                {
                    Database = database,
                    Subscription = new ClusterSubscriptionChange(record.Name)
                    {
                        Query = record.Query,
                        Disabled = record.Disabled,
                        Mentor = NodeTag,
                        Position = new Dictionary<string, long> { [local.DatabaseId] = record.AckedEtag },
                        Time = record.CreatedAt,
                    },
                }, token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The cluster is founded all the same; those subscriptions stay this node's own.
            LogSubscriptionsNotRecorded(_logger, e, database);
        }
    }

    [LoggerMessage(EventId = 759, Level = LogLevel.Error, Message = "The subscriptions of database {Database} could not be put in the cluster's state; they stay on this node only")]
    private static partial void LogSubscriptionsNotRecorded(ILogger logger, Exception exception, string database);

    /// <summary>
    /// On the leader, every second: a mentor that has not answered for <see cref="MentorDownAfter"/>
    /// gives its subscriptions to another node of the database (the same hash choice, among those
    /// that answer); the new mentor resumes from the position stored in the cluster.
    /// </summary>
    private async Task WatchMentorsAsync(CancellationToken token)
    {
        var downSince = new Dictionary<string, DateTime>(StringComparer.Ordinal);
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        while (await timer.WaitForNextTickAsync(token).ConfigureAwait(false))
        {
            try
            {
                if (!IsClustered || !IsLeader)
                {
                    downSince.Clear();
                    _autoIndexReports.Clear();
                    continue;
                }
                var state = State;
                var status = MemberStatus;
                var now = DateTime.UtcNow;
                foreach (var tag in state.Members.Keys)
                {
                    if (tag == NodeTag || status.GetValueOrDefault(tag))
                    {
                        downSince.Remove(tag);
                    }
                    else
                    {
                        downSince.TryAdd(tag, now);
                    }
                }
                foreach (var (database, subscriptions) in state.Subscriptions.ByDatabase)
                {
                    if (!state.Databases.TryGetValue(database, out var record))
                    {
                        continue;
                    }
                    foreach (var subscription in subscriptions.Values)
                    {
                        if (!downSince.TryGetValue(subscription.Mentor, out var since) || now - since < MentorDownAfter)
                        {
                            continue;
                        }
                        var next = ClusterSubscriptions.ChooseMentor(subscription.Name, record.Nodes, t => !downSince.ContainsKey(t) && !record.IsCatchingUp(t));
                        if (next == subscription.Mentor)
                        {
                            continue;
                        }
                        await ExecuteAsync(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.SetSubscriptionMentor)
                        {
                            Database = record.Name,
                            Subscription = new ClusterSubscriptionChange(subscription.Name) { Mentor = next },
                        }, token).ConfigureAwait(false);
                        LogMentorMoved(_logger, subscription.Name, record.Name, subscription.Mentor, next);
                    }
                }
                await WatchBackupsAsync(state, downSince, now, token).ConfigureAwait(false);
                await WatchDatabaseNodesAsync(state, downSince, now, token).ConfigureAwait(false);
                await RetireIdleAutoIndexesAsync(state, now, token).ConfigureAwait(false);
            }
            catch (Exception e) when (!token.IsCancellationRequested)
            {
                LogMentorWatchFailed(_logger, e);
            }
        }
    }

    [LoggerMessage(EventId = 720, Level = LogLevel.Information, Message = "Subscription {Subscription} of database {Database} moves from node {From}, which does not answer, to node {To}")]
    private static partial void LogMentorMoved(ILogger logger, string subscription, string database, string from, string to);

    [LoggerMessage(EventId = 721, Level = LogLevel.Warning, Message = "Could not give a subscription whose mentor is down to another node; retrying")]
    private static partial void LogMentorWatchFailed(ILogger logger, Exception exception);
}
