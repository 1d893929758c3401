namespace Jackdaw.Server.Cluster;

/// <summary>
/// What a promotable's mentor sees of its own feed to it at one moment (its replication sender):
/// whether the sender is connected, the etag of the mentor's feed the promotable acknowledged
/// holding everything up to (-1 before it first answered), the mentor's last etag then (read
/// before the acknowledgement), and the mentor's last etag one observation earlier (null on the first).
/// <see cref="PromotionCriterion"/> judges it; a <see cref="ClusterCommandKind.PromoteDatabaseNode"/> carries it.
/// </summary>
public sealed record PromotableProgress(bool Connected, long Acknowledged, long MentorEtag, long? EarlierMentorEtag)
{
    /// <summary>
    /// The promotable's indexes that hold every change of its copy up to its last etag of the
    /// observation before, or that cannot catch up (in error, disabled); as its
    /// <c>/indexes/caught-up</c> answered. Null in a promotion committed before indexes were
    /// judged: such a log entry is applied as it was then.
    /// </summary>
    public IReadOnlyList<string>? IndexesCaughtUp { get; init; }

    /// <summary>The revision etag of the mentor's revisions feed the promotable holds everything up to (-1 before it answered); null in a promotion committed before revisions were judged.</summary>
    public long? AcknowledgedRevision { get; init; }

    /// <summary>The mentor's last revision etag one observation earlier; null on the first (or before revisions were judged).</summary>
    public long? EarlierMentorRevisionEtag { get; init; }
}
