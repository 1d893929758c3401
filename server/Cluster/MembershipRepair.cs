namespace Jackdaw.Server.Cluster;

/// <summary>One repair <see cref="MembershipReconciler.Plan"/> asks for: its kind, the node's tag (null for a voter with none) and URL.</summary>
public sealed record MembershipRepair(MembershipRepairKind Kind, string? Tag, string Url);
