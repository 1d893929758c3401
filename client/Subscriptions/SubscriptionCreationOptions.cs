namespace Jackdaw.Client;

/// <summary>What <see cref="DocumentSubscriptions.CreateAsync(SubscriptionCreationOptions, CancellationToken)"/> sends.</summary>
public sealed class SubscriptionCreationOptions
{
    /// <summary>The subscription's name; null lets the server choose one (its id).</summary>
    public string? Name { get; set; }

    /// <summary>
    /// RQL: <c>from Orders where Freight &gt; 10 include Company</c>. A collection (or <c>@all_docs</c>),
    /// an optional <c>where</c> with literal values (a subscription has no parameters), <c>select</c>, <c>include</c>.
    /// </summary>
    public string? Query { get; set; }

    /// <summary>
    /// Where delivery starts: <c>BeginningOfTime</c> (null means the same), <c>LastDocument</c>
    /// (only documents written from now on), an etag, or a change vector.
    /// </summary>
    public string? ChangeVector { get; set; }
}
