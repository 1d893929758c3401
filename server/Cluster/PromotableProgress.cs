namespace Jackdaw.Server.Cluster;

/// <summary>
/// What a promotable's mentor sees of its own feed to it at one moment (its replication sender):
/// whether the sender is connected, the etag of the mentor's feed the promotable acknowledged
/// holding everything up to (-1 before it first answered), the mentor's last etag then (read
/// before the acknowledgement), and the mentor's last etag one observation earlier (null on the first).
/// <see cref="PromotionCriterion"/> judges it; a <see cref="ClusterCommandKind.PromoteDatabaseNode"/> carries it.
/// </summary>
public sealed record PromotableProgress(bool Connected, long Acknowledged, long MentorEtag, long? EarlierMentorEtag);
