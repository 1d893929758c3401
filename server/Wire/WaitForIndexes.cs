using Jackdaw.Server.Queries;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>
/// <c>bulk_docs?waitForIndexesTimeout=00:00:15&amp;waitForIndexThrow=true&amp;waitForSpecificIndex=Orders/Totals</c>,
/// as RavenDB's session sends them for <c>waitForIndexesAfterSaveChanges</c>: how long to wait, whether a
/// timeout is an error (RavenDB's default) or an answer, and which indexes (else every index the batch's
/// collections may change).
/// </summary>
public sealed record WaitForIndexes(TimeSpan Timeout, bool Throw, IReadOnlyList<string> Indexes)
{
    /// <summary>The longest wait a request may ask for.</summary>
    public static readonly TimeSpan MaxTimeout = TimeSpan.FromHours(1);

    public static WaitForIndexes? Read(UrlQuery query)
    {
        if (query.GetString("waitForIndexesTimeout") is not { } text)
        {
            return null;
        }
        if (!TimeSpan.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var timeout) || timeout < TimeSpan.Zero || timeout > MaxTimeout)
        {
            throw new BadRequestException($"Query parameter 'waitForIndexesTimeout' is '{text}'; it is a time such as 00:00:15 (at most {MaxTimeout}).");
        }
        var @throw = query.GetString("waitForIndexThrow") switch
        {
            null => true,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'waitForIndexThrow' is '{value}'; it is true or false."),
        };
        var indexes = new List<string>();
        foreach (var parameter in query)
        {
            if (parameter.NameEquals("waitForSpecificIndex") && !parameter.RawValue.IsEmpty)
            {
                indexes.Add(UrlQuery.Decode(parameter.RawValue, "waitForSpecificIndex"));
            }
        }
        return new WaitForIndexes(timeout, @throw, indexes);
    }
}
