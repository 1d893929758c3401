namespace Jackdaw.Client.Conventions;

/// <summary>English plurals for collection names: enough rules for type names, not a dictionary.</summary>
internal static class Inflector
{
    private static readonly Dictionary<string, string> Irregular = new(StringComparer.OrdinalIgnoreCase)
    {
        ["Person"] = "People",
        ["Child"] = "Children",
        ["Man"] = "Men",
        ["Woman"] = "Women",
        ["Mouse"] = "Mice",
        ["Goose"] = "Geese",
        ["Foot"] = "Feet",
        ["Tooth"] = "Teeth",
        ["Ox"] = "Oxen",
        ["Datum"] = "Data",
        ["Index"] = "Indexes",
    };

    private static readonly HashSet<string> Uncountable = new(StringComparer.OrdinalIgnoreCase)
    {
        "Equipment", "Information", "Rice", "Money", "Species", "Series", "Fish", "Sheep", "Deer", "News", "Data", "Metadata",
    };

    public static string Pluralize(string word)
    {
        if (word.Length == 0)
        {
            return word;
        }

        // Compound names pluralize their last word: OrderLine → OrderLines, SalesPerson → SalesPeople.
        var lastWordStart = word.Length - 1;
        while (lastWordStart > 0 && !char.IsUpper(word[lastWordStart]))
        {
            lastWordStart--;
        }
        var head = word[..lastWordStart];
        var last = word[lastWordStart..];

        if (Uncountable.Contains(last))
        {
            return word;
        }
        if (Irregular.TryGetValue(last, out var irregular))
        {
            return head + MatchCase(last, irregular);
        }
        return head + PluralizeRegular(last);
    }

    private static string PluralizeRegular(string word)
    {
        if (word.EndsWith('y') && word.Length > 1 && !IsVowel(word[^2]))
        {
            return word[..^1] + "ies";
        }
        if (word.EndsWith('s') || word.EndsWith('x') || word.EndsWith('z') || word.EndsWith("ch", StringComparison.Ordinal) || word.EndsWith("sh", StringComparison.Ordinal))
        {
            return word + "es";
        }
        return word + "s";
    }

    private static string MatchCase(string original, string replacement) =>
        char.IsUpper(original[0]) ? char.ToUpperInvariant(replacement[0]) + replacement[1..] : replacement.ToLowerInvariant();

    private static bool IsVowel(char c) => "aeiouAEIOU".Contains(c, StringComparison.Ordinal);
}
