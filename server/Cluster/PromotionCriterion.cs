namespace Jackdaw.Server.Cluster;

/// <summary>
/// When a promotable has caught up with its mentor (a pure function, judged by the mentor before it
/// asks the leader, again by the leader, and by <see cref="ClusterState.Apply"/>): the mentor's
/// sender to it is connected and the promotable acknowledged the mentor's feed up to the mentor's
/// last etag of the observation before (about a second earlier). It then holds everything the
/// mentor held a moment before it is promoted (its revisions too, by the revisions' own feed
/// and counter, alike); under a steady stream of writes it still qualifies
/// (RavenDB compares the mentor's last sent etag with its previous report alike). At least two
/// observations are needed, so a node is never promoted on the instant it connects. Its indexes
/// too: each index of the database's record is on the promotable and has processed every change
/// of the promotable's copy up to its last etag of the observation before (one in error or disabled,
/// which cannot catch up, does not hold it back), so clients sent to the new member query indexes
/// that know its documents (RavenDB's <c>IndexNotUpToDate</c>).
/// </summary>
public static class PromotionCriterion
{
    /// <summary>
    /// Whether one index of a promotable, as its <c>/indexes/caught-up</c> answered, holds the
    /// promotion back: it has not caught up and can by itself. One in error, disabled or idle (an
    /// auto-index nobody queries on a node that is not served yet) cannot, and does not; one an
    /// operator stopped (its state stays Normal) does, until it is started.
    /// </summary>
    public static bool HoldsBack(bool caughtUp, string? state) => !caughtUp && state is not ("Error" or "Disabled" or "Idle");

    /// <summary>Why <paramref name="progress"/> does not show the promotable's copy caught up with its mentor's documents (its indexes not judged).</summary>
    public static (string Status, string Reason)? NotReady(PromotableProgress progress) => NotReady(progress with { IndexesCaughtUp = null }, []);

    /// <summary>Why <paramref name="progress"/> does not show the promotable caught up, documents and indexes, as RavenDB's status and a sentence; null when it does.</summary>
    /// <param name="indexes">The names of the indexes of the database's record.</param>
    public static (string Status, string Reason)? NotReady(PromotableProgress progress, IEnumerable<string> indexes)
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
        if (progress.AcknowledgedRevision is { } revisions && progress.EarlierMentorRevisionEtag is { } requiredRevisions && revisions < requiredRevisions)
        {
            return ("ChangeVectorNotMerged", $"It holds its mentor's revisions up to revision etag {revisions} of {requiredRevisions}.");
        }
        if (progress.IndexesCaughtUp is { } caughtUp)
        {
            foreach (var index in indexes)
            {
                if (!caughtUp.Contains(index, StringComparer.OrdinalIgnoreCase))
                {
                    return ("IndexNotUpToDate", $"Its index '{index}' has not processed every change of its copy up to its etag of the observation before.");
                }
            }
        }
        return null;
    }
}
