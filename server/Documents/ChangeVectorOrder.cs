namespace Jackdaw.Server.Documents;

/// <summary>How one change vector stands to another (<see cref="ChangeVectors.Compare"/>).</summary>
public enum ChangeVectorOrder : byte
{
    /// <summary>The same entries.</summary>
    Equal,

    /// <summary>Every entry of the first is at most the second's: the second already holds the first (RavenDB's AlreadyMerged).</summary>
    Older,

    /// <summary>Every entry of the second is at most the first's, and one is higher: the first is an update of the second.</summary>
    Newer,

    /// <summary>Each has an entry higher than the other's: concurrent writes.</summary>
    Conflict,
}
