namespace Jackdaw.Client;

/// <summary>How <see cref="IRevisionsSessionOperations.ForceRevisionCreationFor(string, ForceRevisionStrategy)"/> makes a revision (RavenDB's <c>ForceRevisionStrategy</c>).</summary>
public enum ForceRevisionStrategy
{
    None,

    /// <summary>
    /// A revision of the document as stored before this session's changes to it (a document the
    /// session changes gets it through its PUT's <c>"ForceRevisionCreationStrategy":"Before"</c>; one
    /// it does not, through a <c>ForceRevisionCreation</c> command; a new one, through that command
    /// after its PUT). Made whatever the revisions policy says, unless an identical revision is the newest.
    /// </summary>
    Before,
}
