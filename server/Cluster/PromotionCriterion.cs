namespace Jackdaw.Server.Cluster;

/// <summary>
/// When a promotable has caught up with its mentor (a pure function, judged by the mentor before it
/// asks the leader, again by the leader, and by <see cref="ClusterState.Apply"/>): the mentor's
/// sender to it is connected and the promotable acknowledged the mentor's feed up to the mentor's
/// last etag of the observation before (about a second earlier). It then holds everything the
/// mentor held a moment before it is promoted; under a steady stream of writes it still qualifies
/// (RavenDB compares the mentor's last sent etag with its previous report alike). At least two
/// observations are needed, so a node is never promoted on the instant it connects.
/// </summary>
public static class PromotionCriterion
{
    /// <summary>Why <paramref name="progress"/> does not show the promotable caught up, as RavenDB's status and a sentence; null when it does.</summary>
    public static (string Status, string Reason)? NotReady(PromotableProgress progress)
    {
        if (!progress.Connected)
        {
            return ("NotResponding", "Its mentor's replication to it is not connected.");
        }
        if (progress.Acknowledged < 0)
        {
            return ("WaitingForResponse", "It has not answered its mentor's replication yet.");
        }
        if (progress.EarlierMentorEtag is not { } required)
        {
            return ("WaitingForResponse", "Its mentor has observed it once; it judges on the next observation.");
        }
        if (progress.Acknowledged < required)
        {
            return ("ChangeVectorNotMerged", $"It holds its mentor's feed up to etag {progress.Acknowledged} of {required}.");
        }
        return null;
    }
}
