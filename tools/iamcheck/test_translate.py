"""Unit tests of translate.py's intrinsic resolution (make iam-test runs them before the variants)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import translate  # noqa: E402

CFN = {
    "Parameters": {
        "KmsKeyArn": {"Type": "String", "Default": ""},
        "ApprovalsTable": {"Type": "String", "Default": ""},
        "Size": {"Type": "Number", "Default": 0},
    },
    "Conditions": {
        "HasKmsKey": {"Fn::Not": [{"Fn::Equals": [{"Ref": "KmsKeyArn"}, ""]}]},
        "HasBoth": {"Fn::And": [{"Condition": "HasKmsKey"}, {"Fn::Not": [{"Fn::Equals": [{"Ref": "ApprovalsTable"}, ""]}]}]},
        "NoSize": {"Fn::Equals": [{"Ref": "Size"}, 0]},
    },
    "Resources": {
        "EventsTable": {"Type": "AWS::DynamoDB::Table", "Properties": {}},
        "EventsQueue": {"Type": "AWS::SQS::Queue", "Properties": {}},
        "Fifo": {"Type": "AWS::SQS::Queue", "Properties": {"FifoQueue": True}},
        "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": {"Fn::Sub": "${AWS::StackName}-outcomes"}}},
        "Logs": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/aws/lambda/x"}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"Path": "/svc/"}},
        "Optional": {"Type": "AWS::SQS::Queue", "Condition": "HasKmsKey", "Properties": {}},
    },
}


class ResolverTest(unittest.TestCase):
    def r(self, params=None):
        return translate.Resolver(CFN, params or {})

    def test_refs_and_attributes_agree(self):
        r = self.r()
        self.assertEqual(r.resolve({"Fn::GetAtt": ["EventsTable", "Arn"]}),
                         "arn:aws:dynamodb:us-east-1:123456789012:table/EventsTable-phys")
        self.assertEqual(r.resolve({"Ref": "EventsTable"}), "EventsTable-phys")
        self.assertEqual(r.resolve({"Fn::GetAtt": "EventsQueue.QueueName"}), "EventsQueue-phys")
        self.assertEqual(r.resolve({"Ref": "EventsQueue"}), "https://sqs.us-east-1.amazonaws.com/123456789012/EventsQueue-phys")
        self.assertEqual(r.resolve({"Fn::GetAtt": ["Fifo", "Arn"]}), "arn:aws:sqs:us-east-1:123456789012:Fifo-phys.fifo")
        self.assertEqual(r.resolve({"Fn::GetAtt": ["Bus", "Arn"]}), "arn:aws:events:us-east-1:123456789012:event-bus/hookwall-outcomes")
        self.assertEqual(r.resolve({"Fn::GetAtt": ["Logs", "Arn"]}), "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/x:*")
        self.assertEqual(r.resolve({"Fn::GetAtt": ["Role", "Arn"]}), "arn:aws:iam::123456789012:role/svc/Role-phys")

    def test_sub(self):
        r = self.r({"ApprovalsTable": "t1"})
        self.assertEqual(r.resolve({"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ApprovalsTable}"}),
                         "arn:aws:dynamodb:us-east-1:123456789012:table/t1")
        self.assertEqual(r.resolve({"Fn::Sub": "${EventsTable.Arn}/index/sweep"}),
                         "arn:aws:dynamodb:us-east-1:123456789012:table/EventsTable-phys/index/sweep")
        self.assertEqual(r.resolve({"Fn::Sub": ["${q}-x ${!Literal}", {"q": {"Fn::GetAtt": ["EventsQueue", "QueueName"]}}]}),
                         "EventsQueue-phys-x ${Literal}")

    def test_conditions_and_no_value(self):
        stmt = [{"Fn::If": ["HasKmsKey", {"Resource": {"Ref": "KmsKeyArn"}}, {"Ref": "AWS::NoValue"}]}, "x"]
        self.assertEqual(self.r().resolve(stmt), ["x"])
        self.assertEqual(self.r({"KmsKeyArn": "k"}).resolve(stmt), [{"Resource": "k"}, "x"])
        self.assertFalse(self.r({"KmsKeyArn": "k"}).condition("HasBoth"))
        self.assertTrue(self.r({"KmsKeyArn": "k", "ApprovalsTable": "t"}).condition("HasBoth"))
        self.assertTrue(self.r().condition("NoSize"))
        self.assertEqual(self.r().resolve({"a": {"Ref": "AWS::NoValue"}, "b": 1}), {"b": 1})
        self.assertFalse(self.r().resource_exists("Optional"))
        self.assertIsNone(translate.logical_arn(self.r(), "Optional"))

    def test_join_select_split(self):
        r = self.r()
        self.assertEqual(r.resolve({"Fn::Join": ["/", ["a", {"Ref": "AWS::Region"}]]}), "a/us-east-1")
        self.assertEqual(r.resolve({"Fn::Select": [1, {"Fn::Split": [":", "a:b:c"]}]}), "b")

    def test_logical_names(self):
        r = self.r({"KmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/k", "ApprovalsTable": "t1"})
        self.assertEqual(translate.logical_arn(r, "KmsKey"), "arn:aws:kms:us-east-1:123456789012:key/k")
        self.assertEqual(translate.logical_arn(r, "ApprovalsTable"), "arn:aws:dynamodb:us-east-1:123456789012:table/t1")
        self.assertEqual(translate.logical_arn(r, "EventsTable/index/held"),
                         "arn:aws:dynamodb:us-east-1:123456789012:table/EventsTable-phys/index/held")
        self.assertIsNone(translate.logical_arn(self.r(), "KmsKey"))
        with self.assertRaises(translate.CheckError):
            translate.logical_arn(r, "NoSuchThing")

    def test_unknown_intrinsic_is_an_error(self):
        with self.assertRaises(translate.CheckError):
            self.r().resolve({"Fn::ImportValue": "x"})
        with self.assertRaises(translate.CheckError):
            self.r().resolve({"Fn::GetAtt": ["EventsTable", "Nope"]})


if __name__ == "__main__":
    import io

    out = io.StringIO()
    result = unittest.TextTestRunner(stream=out, verbosity=1).run(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]))
    if not result.wasSuccessful():
        print(out.getvalue())
        sys.exit(1)
    print(f"iam-test: translate.py's intrinsics: {result.testsRun} tests ok")
