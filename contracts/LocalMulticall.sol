// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Batched reads for the local development chain
/// @notice Public chains keep a multicall contract at 0xcA11bde05977b3631167028862bE2a173976CA11;
/// a fresh anvil does not. The x402 facilitator reads a token's state through that address when
/// it explains why a transfer would fail (balance, nonce, domain), so the development server puts
/// this contract's runtime code there. It keeps no state and holds no funds.
contract LocalMulticall {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Runs each call in order; with requireSuccess a failing call reverts the batch.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 index = 0; index < calls.length; index++) {
            (bool success, bytes memory returned) = calls[index].target.call(calls[index].callData);
            require(success || !requireSuccess, "LocalMulticall: call failed");
            results[index] = Result(success, returned);
        }
    }
}
