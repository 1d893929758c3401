using System.Globalization;
using System.Text.Json;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// A Lucene analysis part an analyzer description may name: a char filter, a tokenizer or a token
/// filter of Lucene.Net's analysis package, by its factory name (<see cref="Name"/>, matched ignoring
/// case), with the arguments Jackdaw lets through to its factory and their bounds.
/// </summary>
public sealed record AnalysisPart(AnalysisPart.PartKind Kind, string Name, IReadOnlyList<AnalysisPart.Argument> Arguments)
{
    /// <summary>Where a part sits in an analyzer: char filters, then one tokenizer, then token filters.</summary>
    public enum PartKind : byte
    {
        CharFilter,
        Tokenizer,
        TokenFilter,
    }

    /// <summary>How an argument's value is checked.</summary>
    public enum ArgumentKind : byte
    {
        /// <summary>A whole number from <see cref="Argument.Min"/> to <see cref="Argument.Max"/>.</summary>
        Integer,

        /// <summary>true or false.</summary>
        Boolean,

        /// <summary>One of <see cref="Argument.Choices"/> (ignoring case).</summary>
        Choice,

        /// <summary>A string of at most <see cref="Argument.Max"/> characters.</summary>
        Text,

        /// <summary>A string of exactly one character.</summary>
        Character,
    }

    /// <summary>An argument of a part: its name as the Lucene factory reads it, and what values it may have.</summary>
    public sealed record Argument(string Name, ArgumentKind Kind, int Min = 0, int Max = 0, IReadOnlyList<string>? Choices = null, bool Required = false)
    {
        /// <summary>The value as the factory reads it (invariant text), or null with <paramref name="problem"/> saying why it is refused.</summary>
        public string? Check(JsonElement value, out string? problem)
        {
            problem = null;
            var text = value.ValueKind switch
            {
                JsonValueKind.String => value.GetString(),
                JsonValueKind.Number => value.GetRawText(),
                JsonValueKind.True => "true",
                JsonValueKind.False => "false",
                _ => null,
            };
            switch (Kind)
            {
                case ArgumentKind.Integer:
                    if (text is not null && int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number) && number >= Min && number <= Max)
                    {
                        return number.ToString(CultureInfo.InvariantCulture);
                    }
                    problem = $"a whole number from {Min} to {Max}";
                    return null;
                case ArgumentKind.Boolean:
                    if (text is not null && bool.TryParse(text, out var flag))
                    {
                        return flag ? "true" : "false";
                    }
                    problem = "true or false";
                    return null;
                case ArgumentKind.Choice:
                    var choice = text is null ? null : Choices!.FirstOrDefault(c => string.Equals(c, text, StringComparison.OrdinalIgnoreCase));
                    if (choice is not null)
                    {
                        return choice;
                    }
                    problem = "one of " + string.Join(", ", Choices!);
                    return null;
                case ArgumentKind.Character:
                    if (value.ValueKind == JsonValueKind.String && text!.Length == 1)
                    {
                        return text;
                    }
                    problem = "a string of one character";
                    return null;
                default:
                    if (value.ValueKind == JsonValueKind.String && text!.Length <= Max)
                    {
                        return text;
                    }
                    problem = $"a string of at most {Max} characters";
                    return null;
            }
        }
    }

    /// <summary>How messages name the kind: "char filter", "tokenizer", "token filter".</summary>
    public static string Describe(PartKind kind) => kind switch
    {
        PartKind.CharFilter => "char filter",
        PartKind.Tokenizer => "tokenizer",
        _ => "token filter",
    };
}
